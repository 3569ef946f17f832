"""How much heph sends the model, for fixed scripted tasks.

    python benchmarks/tokens.py [--sympy-dir DIR]

Tasks, each run by the real Agent with a scripted model that records every request:
- the README's task, "fix the failing test in tests/test_pricing.py", in a copy of
  sandbox_workspace: read the test, read the code, edit it, run the tests, answer (5 requests);
- a 50-step read task in the same copy (49 reads of line ranges, then an answer);
- the first request of a task in a large source tree: sympy's sdist (fetched as
  benchmarks/context.py does) or --sympy-dir.
Run it where `pytest` is on PATH (the project's virtual environment), so that the test command
is detected as it is for a user.

Prints, per task, the characters and tokens of the first request, of all requests and of the
largest one. Tokens are counted as characters / 4 and by heph's own estimate (which leans high
on purpose). With --tokenizer they are also counted by a real tokenizer, of the messages' text,
of the messages as a chat server receives them (roles and template tokens included: what it
bills), and of the request's JSON text (escapes and keys included, a harsher count): a
GGUF model's (needs llama-cpp-python), or OpenAI's cl100k_base from the ranks file the
js-tiktoken npm package ships (`npm pack js-tiktoken`, then
package/dist/ranks/cl100k_base.cjs; needs `pip install tiktoken`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from context import sympy_copy

from hephaistus import tokens
from hephaistus.engine.agent import Agent
from hephaistus.runtime.policy import Policy
from hephaistus.settings.config import Config
from hephaistus.testing import ScriptedModel, replies
from hephaistus.workspace import Workspace

SANDBOX = Path(__file__).resolve().parents[1] / "sandbox_workspace"


def act(tool: str, thought: str, **args: object) -> str:
    return json.dumps(replies.act(tool, thought, **args))


def answer(message: str) -> str:
    return json.dumps(replies.final(message))


FIX_THE_TEST = [
    act("read_file", "Start with the failing test.", path="tests/test_pricing.py"),
    act("read_file", "Now the code it tests.", path="inventory/pricing.py"),
    act(
        "edit_file",
        "The threshold is inclusive and the discount is subtracted.",
        path="inventory/pricing.py",
        old="    if quantity > BULK_THRESHOLD:\n        total *= BULK_DISCOUNT",
        new="    if quantity >= BULK_THRESHOLD:\n        total *= 1 - BULK_DISCOUNT",
    ),
    act("run_command", "Check the fix.", name="test"),
    answer("Fixed the bulk discount in inventory/pricing.py; the tests pass."),
]


def fifty_reads() -> list[str]:
    files = ["inventory/pricing.py", "inventory/report.py", "tests/test_pricing.py"]
    steps = [
        act(
            "read_file",
            f"Look at part {n}.",
            path=files[n % 3],
            start_line=1 + n % 7,
            end_line=20 + n % 11,
        )
        for n in range(49)
    ]
    return [*steps, answer("Read everything.")]


def measure(root: Path, task: str, replies: list[str]) -> list[int]:
    """The size in characters of each request the model received."""
    model = ScriptedModel(replies)
    config = Config(max_steps=len(replies) + 1)  # the test command is detected, as for a user
    agent = Agent(Workspace.at(root), config, model=model, policy=Policy("auto"))
    outcome = agent.execute(task)
    if outcome.status != "answered":
        raise SystemExit(f"the scripted task did not finish: {outcome.message}")
    return [sum(len(m["content"]) for m in call) for call in model.calls], model.calls


def real_tokenizer(source: Path | None):
    """A function counting tokens as `source` (a GGUF model or js-tiktoken ranks) does."""
    if source is None:
        return None
    if source.suffix == ".gguf":
        import llama_cpp

        vocabulary = llama_cpp.Llama(model_path=str(source), vocab_only=True, verbose=False)
        return lambda text: len(vocabulary.tokenize(text.encode(), add_bos=False, special=False))
    import base64

    import tiktoken

    text = source.read_text()
    data = json.loads(text[text.index("{") : text.rindex("}") + 1])
    ranks = {}
    for line in filter(None, data["bpe_ranks"].split("\n")):  # "<prefix> <first rank> <b64>..."
        _, first, *pieces = line.split(" ")
        ranks.update((base64.b64decode(p), int(first) + i) for i, p in enumerate(pieces))
    encoding = tiktoken.Encoding(
        source.stem, pat_str=data["pat_str"], mergeable_ranks=ranks, special_tokens={}
    )
    return lambda text: len(encoding.encode_ordinary(text))


def sent_tokens(messages: list[dict], tokenize) -> int:
    """Tokens of a request as a chat server counts them: each message's role and content plus
    3 tokens of its template, and 3 that open the reply (OpenAI's published accounting)."""
    return 3 + sum(3 + tokenize(m["role"]) + tokenize(m["content"]) for m in messages)


def report(name: str, sizes: list[int], calls: list, tokenize=None) -> None:
    def columns(index: int | None) -> str:
        picked = range(len(calls)) if index is None else [index]
        chars = sum(sizes[i] for i in picked)
        contents = [m["content"] for i in picked for m in calls[i]]
        line = f"{chars:>9,} chars {-(-chars // 4):>8,} tok(c/4)"
        line += f" {sum(map(tokens.estimate, contents)):>8,} tok(heph)"
        if tokenize:
            sent = sum(sent_tokens(calls[i], tokenize) for i in picked)
            body = sum(tokenize(json.dumps({"messages": calls[i]})) for i in picked)
            line += f" {sum(map(tokenize, contents)):>8,} tok(real) {sent:>8,} tok(real, sent)"
            line += f" {body:>8,} tok(real, json)"
        return line

    largest = max(range(len(sizes)), key=lambda i: sizes[i])
    print(f"{name} ({len(sizes)} requests)")
    print(f"  first request  {columns(0)}")
    print(f"  all requests   {columns(None)}")
    print(f"  largest        {columns(largest)}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sympy-dir", type=Path)
    parser.add_argument("--tokenizer", type=Path, help="MODEL.gguf or js-tiktoken ranks")
    args = parser.parse_args()
    tokenize = real_tokenizer(args.tokenizer)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "sandbox"
        shutil.copytree(SANDBOX, root, ignore=shutil.ignore_patterns("__pycache__", ".heph"))
        report(
            "fix the failing test",
            *measure(root, "fix the failing test in tests/test_pricing.py", FIX_THE_TEST),
            tokenize,
        )
        shutil.rmtree(root)
        shutil.copytree(SANDBOX, root, ignore=shutil.ignore_patterns("__pycache__", ".heph"))
        report(
            "50-step read task", *measure(root, "read the inventory code", fifty_reads()), tokenize
        )
        tree = args.sympy_dir or sympy_copy(Path(folder))
        report(
            "first request in sympy",
            *measure(
                tree, "where is the derivative of sin computed?", [answer("in sympy/functions")]
            ),
            tokenize,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
