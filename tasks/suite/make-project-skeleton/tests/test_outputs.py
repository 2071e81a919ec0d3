from pathlib import Path

ROOT = Path("/app/myproj")


def test_package_init():
    init = ROOT / "src" / "myproj" / "__init__.py"
    assert init.is_file(), f"{init} does not exist"
    assert init.read_text().strip() == "", f"{init} must be empty, found {init.read_text()!r}"


def test_tests_directory():
    tests = ROOT / "tests"
    assert tests.is_dir(), f"{tests} is not a directory"
    assert list(tests.iterdir()) == [], f"{tests} must be empty"


def test_readme():
    readme = ROOT / "README.md"
    assert readme.is_file(), f"{readme} does not exist"
    assert readme.read_text().strip() == "# myproj", f"README.md holds {readme.read_text()!r}"


def test_gitignore():
    ignore = ROOT / ".gitignore"
    assert ignore.is_file(), f"{ignore} does not exist"
    assert ignore.read_text().strip() == "__pycache__/", f".gitignore holds {ignore.read_text()!r}"
