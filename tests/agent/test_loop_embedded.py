"""The real embedded model through one step of the seed harness: its reply must parse into an action
on a registered tool (what it chooses is not checked: that is the model's business)."""
from __future__ import annotations

import pytest

from evoharness.agent.clients import make_model
from evoharness.agent.model import ModelReply
from evoharness.agent.parsing import parse_reply


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["embedded-small", "embedded"])
def test_embedded_model_reply_parses_into_a_valid_action(harness, spec):
    harness.settings(max_steps=1, max_output_tokens=128)
    (harness.app / "numbers.txt").write_text("3\n4\n")
    result, sink, _ = harness.run(make_model(spec), "Write the sum of the numbers in /app/numbers.txt "
                                                    "into /app/sum.txt")
    reply = next(e for e in sink.events if e.kind == "model_call")
    action = parse_reply(ModelReply(content=reply.content), "json")
    assert action.tool in {"shell", "done"}
    assert result.tokens_in > 0 and result.exit_reason in {"max_steps", "done"}
