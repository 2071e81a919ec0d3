"""`evoharness model chat` end to end against the loopback Ollama script server, and `model
install` on this machine's installed weights."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evoharness.evolve.cli import main
from tests.fixtures.ollama_server import OllamaScriptServer


def test_chat_prints_reply_and_tokens(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    script = [{"content": "hello human", "prompt_eval_count": 8, "eval_count": 2}]
    with OllamaScriptServer(script) as s:
        monkeypatch.setenv("OLLAMA_HOST", s.url)
        with pytest.raises(SystemExit) as exited:
            main(["model", "chat", "say hello", "--model", "ollama:qwen", "--json-mode"])
    assert exited.value.code == 0
    out, err = capsys.readouterr()
    assert out.strip() == "hello human"
    assert "8 tokens in, 2 out" in err
    assert s.requests[0]["format"] == "json"
    assert s.requests[0]["messages"] == [{"role": "user", "content": "say hello"}]


def test_unknown_spec_exits_2_with_the_accepted_forms(capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["model", "chat", "hi", "--model", "gpt-4"])
    assert exited.value.code == 2
    assert "openai:BASE_URL#MODEL" in capsys.readouterr().err


def test_model_install_reports_both_verified_models(capsys) -> None:
    """install.sh ran `model install`; running it again finds both files verified (their stamps)
    and reports each path and size, as the README's setup relies on."""
    from evoharness.agent.clients.weights import WEIGHTS

    with pytest.raises(SystemExit) as exited:
        main(["model", "install", "--json"])
    assert exited.value.code == 0
    reported = json.loads(capsys.readouterr().out)
    assert set(reported) == set(WEIGHTS)
    for name, entry in reported.items():
        assert entry["size"] == WEIGHTS[name].size
        assert Path(entry["path"]).stat().st_size == WEIGHTS[name].size
