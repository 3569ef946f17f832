import pytest

from hephaistus.model.protocol import FormatError, parse_reply
from hephaistus.tools import default_registry
from hephaistus.values import Action, Final

REGISTRY = default_registry()


def test_plain_action_is_parsed():
    reply = parse_reply(
        '{"thought": "t", "action": {"tool": "read_file", "args": {"path": "a.py"},'
        ' "reason": "r"}}',
        REGISTRY,
    )
    assert reply == Action("t", "read_file", {"path": "a.py"}, "r")


def test_object_inside_fences_and_prose_is_found():
    text = (
        'Sure! Here it is:\n```json\n{"thought": "x", "final": {"message": "hi {there}"}}\n```\nBye'
    )
    assert parse_reply(text, REGISTRY) == Final("x", "hi {there}")


def test_first_complete_object_wins_over_a_broken_one():
    text = '{"thought": broken} then {"thought": "ok", "final": {"message": "m"}} {"x": 1}'
    assert parse_reply(text, REGISTRY) == Final("ok", "m")


def test_final_as_plain_string_is_accepted():
    assert parse_reply('{"final": "done"}', REGISTRY) == Final("", "done")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", "empty"),
        ("no json here", "no complete JSON object"),
        ('{"thought": "t"}', "neither"),
        ('{"thought": "t", "final": {"message": "m"}, "action": {"tool": "read_file"}}', "both"),
        ('{"action": {"tool": "rm_rf", "args": {}}}', "unknown tool 'rm_rf'"),
        ('{"action": {"tool": "read_file", "args": {}}}', "missing required argument 'path'"),
        ('{"action": {"tool": "read_file", "args": {"path": 3}}}', "'path' must be a string"),
        (
            '{"action": {"tool": "read_file", "args": {"path": "a", "start_line": "2"}}}',
            "'start_line' must be an integer",
        ),
        (
            '{"action": {"tool": "read_file", "args": {"path": "a", "mode": "r"}}}',
            "unknown argument 'mode'",
        ),
        ('{"action": "read_file"}', "'action' must be an object"),
        ('{"final": {"text": "m"}}', "string 'message'"),
        ('{"thought": 5, "final": "m"}', "'thought' must be a string"),
    ],
)
def test_malformed_replies_explain_what_was_wrong(text, expected):
    with pytest.raises(FormatError) as caught:
        parse_reply(text, REGISTRY)
    assert expected in caught.value.problem
    observation = caught.value.observation
    assert expected in observation and '"final": {"message"' in observation


def test_unknown_tool_error_lists_the_real_tools():
    with pytest.raises(FormatError) as caught:
        parse_reply('{"action": {"tool": "cat", "args": {}}}', REGISTRY)
    for name in ("read_file", "write_file", "edit_file", "search", "list_files", "append_file"):
        assert name in caught.value.problem


def test_action_key_ignores_argument_order():
    one = Action("", "read_file", {"path": "a", "start_line": 1})
    two = Action("", "read_file", {"start_line": 1, "path": "a"})
    assert one.key == two.key


def test_raw_newlines_inside_strings_are_accepted():
    # real line breaks and tabs inside the JSON string, which strict JSON forbids
    text = (
        '{"thought": "write it", "action": {"tool": "write_file", "args": '
        '{"path": "a.py", "content": "def f():\n\treturn 1\n"}}}'
    )
    assert "\n" in text
    reply = parse_reply(text, REGISTRY)
    assert reply.args["content"] == "def f():\n\treturn 1\n"


def test_arguments_beside_the_tool_name_are_accepted():
    reply = parse_reply(
        '{"thought": "t", "action": {"tool": "read_file", "path": "a.py"}}', REGISTRY
    )
    assert reply == Action("t", "read_file", {"path": "a.py"})


def test_an_action_without_its_wrapper_is_accepted():
    reply = parse_reply('{"thought": "t", "tool": "read_file", "args": {"path": "a.py"}}', REGISTRY)
    assert reply == Action("t", "read_file", {"path": "a.py"})
    with pytest.raises(FormatError, match="unknown argument 'colour'"):
        parse_reply('{"tool": "read_file", "path": "a.py", "colour": "red"}', REGISTRY)


def test_a_thinking_block_before_the_reply_is_skipped():
    text = (
        '<think>Maybe {"final": "too early"} is right? No, read first.</think>\n'
        '{"thought": "read", "action": {"tool": "read_file", "args": {"path": "a.py"}}}'
    )
    assert parse_reply(text, REGISTRY) == Action("read", "read_file", {"path": "a.py"})


def finishes_within(seconds, work):
    """Run `work` in a thread; fail (instead of hanging the suite) if it takes far too long."""
    import threading

    outcome = {}

    def target():
        try:
            outcome["value"] = work()
        except BaseException as error:  # noqa: BLE001 - handed to the test
            outcome["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"thought": "t", "final": {"message": "x"}, "n": ' + "9" * 5000 + "}", "too many digits"),
        ('{"a":' * 100_000 + "1" + "}" * 100_000, "nested too deeply"),
        ("[" * 100_000, "no complete JSON object"),
        ('{"thought": "t", "final": {"message": "bad \\ud800 text"}}', "lone surrogate"),
        (
            '{"thought": "t", "action": {"tool": "write_file", "args": {"path": "a\\udfff.py", '
            '"content": "x"}}}',
            "lone surrogate",
        ),
    ],
)
def test_hostile_replies_are_format_errors_not_crashes(text, expected):
    with pytest.raises(FormatError, match=expected):
        finishes_within(10, lambda: parse_reply(text, REGISTRY))


@pytest.mark.parametrize("junk", ['{"a": "', "{", "<think>", '{"a": [', "{{{{"])
def test_a_megabyte_of_unclosed_json_is_refused_quickly(junk):
    text = junk * (1_000_000 // len(junk))
    with pytest.raises(FormatError):
        finishes_within(10, lambda: parse_reply(text, REGISTRY))


def test_an_object_after_a_little_prose_with_braces_is_still_found():
    text = (
        "In C you write `int f() { return 1; }` and {this}.\n"
        '{"thought": "t", "final": {"message": "m"}}'
    )
    assert parse_reply(text, REGISTRY) == Final("t", "m")
