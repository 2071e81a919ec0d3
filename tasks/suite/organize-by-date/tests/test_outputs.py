from pathlib import Path

ARCHIVED = {'archive/2024/03/report-2024-03-15.txt': 'March, mid\n', 'archive/2024/03/report-2024-03-02.txt': 'March, early\n', 'archive/2023/12/report-2023-12-31.txt': 'end of year\n', 'archive/2024/11/report-2024-11-05.txt': 'November\n'}
STAYED = {"reports/summary.txt": "all reports\n", "reports/report-draft.txt": "not dated\n"}


def files_under(folder):
    root = Path("/app", folder)
    return {str(p.relative_to("/app")): p.read_text() for p in root.rglob("*") if p.is_file()}


def test_archive():
    assert Path("/app/archive").is_dir(), "/app/archive does not exist"
    found = files_under("archive")
    assert found == ARCHIVED, f"/app/archive holds {sorted(found)}, expected {sorted(ARCHIVED)}"


def test_other_files_stay():
    found = files_under("reports")
    assert found == STAYED, f"/app/reports holds {sorted(found)}, expected {sorted(STAYED)}"
