"""What the runaway stop (agent/clients/runaway.py) saves, read from recorded replies: each goes
through the stop as a client streams it, a few characters at a time, and what follows the point
where it is stopped is what the model would not decode. Exact for each reply's own characters;
its tokens are its recorded count scaled by the characters left (the rest of the rollout after a
stopped reply is not replayed: the model reads a different reply from then on).

    python benchmarks/runaways.py [REPLIES_JSON | ROLLOUTS_DIR ...]
    python benchmarks/runaways.py --derive OUT.json ROLLOUTS_DIR ...   (write a replies fixture)

The default fixture holds the replies of two `terse-actions` measurements (the 1.5B, both arms;
docs/lab/trials.md), recorded with the stop of a repeated unit already on, so
what it finds in them is what the stop of a count adds. Prints `replies`, `stopped_repeating`,
`stopped_counting`, `chars_not_decoded` and `tokens_not_decoded` (all replies), and per stopped
reply its task and where it stopped."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pydantic import BaseModel, TypeAdapter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evoharness.agent.clients.runaway import StreamedText  # noqa: E402
from evoharness.tasks.results import RolloutResult  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "replies-terse-2026-12-06.json"
PIECE_CHARS = 3  # about a token of a command: where a streaming client looks again


class Reply(BaseModel):
    task_id: str
    arm: str
    json_reply: bool
    tokens_out: int
    content: str


class Stopped(BaseModel):
    reply: Reply
    at: int  # characters decoded when the stop saw it
    counting: bool  # a count, not one repeated unit

    @property
    def tokens_not_decoded(self) -> float:
        return self.reply.tokens_out * (1 - self.at / len(self.reply.content))


def replies_of(rollouts: Path) -> list[Reply]:
    results = [RolloutResult.model_validate_json(path.read_text())
               for path in sorted(rollouts.glob("*.json"))]
    return [Reply(task_id=r.task_id, arm=r.trial_arm or "base", tokens_out=e.tokens_out,
                  json_reply=e.content.lstrip().startswith("{"), content=e.content)
            for r in results for e in r.events if e.kind == "model_call" and e.content]


def stopped(reply: Reply) -> Stopped | None:
    """Where the stop would have ended this reply, streamed PIECE_CHARS at a time."""
    text = StreamedText(reply.json_reply)
    for at in range(0, len(reply.content), PIECE_CHARS):
        if text.add(reply.content[at:at + PIECE_CHARS]):
            return Stopped(reply=reply, at=len(text.text), counting=text.counting is not None)
    return None


def load(paths: list[Path]) -> list[Reply]:
    if not paths:
        paths = [FIXTURE]
    replies = []
    for path in paths:
        if path.is_dir():
            replies += replies_of(path)
        else:
            replies += TypeAdapter(list[Reply]).validate_json(path.read_text())
    return replies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", type=Path, nargs="*", help="a replies fixture or rollouts dirs")
    parser.add_argument("--derive", type=Path, help="write the replies of the rollouts dirs here")
    args = parser.parse_args()
    replies = load(args.paths)
    if not replies:
        raise SystemExit(f"no replies in {', '.join(map(str, args.paths))}")
    if args.derive:
        lines = ",\n".join(json.dumps(reply.model_dump()) for reply in replies)
        args.derive.write_text(f"[\n{lines}\n]\n")  # a reply a line
        print(f"wrote {len(replies)} replies to {args.derive}")
        return
    stops = [stop for reply in replies if (stop := stopped(reply)) is not None]
    for stop in stops:
        kind = "counting" if stop.counting else "repeating"
        print(f"  {stop.reply.task_id} ({stop.reply.arm}): {kind}, stopped at character "
              f"{stop.at} of {len(stop.reply.content)} ({stop.reply.tokens_out} tokens out)")
    print(f"replies: {len(replies)} replies")
    print(f"stopped_repeating: {sum(not stop.counting for stop in stops)} replies")
    print(f"stopped_counting: {sum(stop.counting for stop in stops)} replies")
    print(f"chars_not_decoded: {sum(len(s.reply.content) - s.at for s in stops)} characters")
    print(f"tokens_not_decoded: {sum(s.tokens_not_decoded for s in stops):.0f} tokens "
          f"of {sum(reply.tokens_out for reply in replies)}")


if __name__ == "__main__":
    main()
