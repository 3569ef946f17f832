"""The real `openai` client against the loopback server: retries, faults and clear errors."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hephaistus.errors import KeyRejected, ModelError
from hephaistus.model.faults import retry_after
from hephaistus.model.llm import ChatModel, request_body
from hephaistus.settings.config import Config
from hephaistus.testing import ChatServer

HELLO = [{"role": "user", "content": "hello"}]


def model_for(server, pauses=None, timeout=1.0, **settings):
    """The client for `server`, recording the waits between retries instead of waiting."""
    record = pauses if pauses is not None else []
    config = Config(base_url=server.url, timeout=timeout, **settings)
    return ChatModel(config, pause=record.append)


def test_reply_usage_and_json_mode_request(chat_server):
    chat_server.reply('{"final": "hi"}', usage={"prompt_tokens": 11, "completion_tokens": 3})
    reply = model_for(chat_server, model="my-model").complete(HELLO)
    assert reply.text == '{"final": "hi"}'
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (11, 3)
    body = chat_server.requests[0]
    assert body["model"] == "my-model" and body["messages"] == HELLO
    assert body["response_format"] == {"type": "json_object"}
    assert chat_server.headers[0]["authorization"] == "Bearer heph-local"


def test_three_transient_faults_in_a_row_then_success(chat_server):
    chat_server.fault("status", status=429, headers={"Retry-After": "0.2"})
    chat_server.fault("status", status=503)
    chat_server.fault("reset")
    chat_server.reply("ok")
    retries = []
    reply = model_for(chat_server).complete(HELLO, on_retry=lambda why, delay: retries.append(why))
    assert reply.text == "ok" and reply.attempts == 4
    assert retries == ["429 rate limited", "server error 503", "connection lost"]


def test_retry_after_is_honoured(chat_server):
    chat_server.fault("status", status=429, headers={"Retry-After": "1"}).reply("ok")
    pauses = []
    model_for(chat_server, pauses).complete(HELLO)
    assert pauses == [1.0]


@pytest.mark.parametrize(
    "headers, pause",
    [
        ({"retry-after-ms": "1500"}, 1.5),  # OpenAI's, in milliseconds
        ({"retry-after-ms": "250", "Retry-After": "9"}, 0.25),  # the finer one wins
        ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date in the past
        ({"Retry-After": "3600"}, 60.0),  # capped
        ({"Retry-After": "nan"}, None),  # nonsense: our own backoff
        ({"Retry-After": "soon"}, None),
    ],
)
def test_retry_after_in_every_form_servers_send(chat_server, headers, pause):
    chat_server.fault("status", status=429, headers=headers).reply("ok")
    pauses = []
    model_for(chat_server, pauses).complete(HELLO)
    if pause is None:
        assert len(pauses) == 1 and 0 < pauses[0] < 2  # the first step of our backoff
    else:
        assert pauses == [pause]


def test_retry_after_as_a_date_in_the_future():
    from email.utils import formatdate

    now = 1_800_000_000.0
    headers = {"retry-after": formatdate(now + 7, usegmt=True)}
    assert retry_after(headers, now=now) == 7.0


def test_backoff_grows_between_attempts(chat_server):
    for _ in range(3):
        chat_server.fault("status", status=503)
    chat_server.reply("ok")
    pauses = []
    model_for(chat_server, pauses).complete(HELLO)
    assert len(pauses) == 3 and pauses[0] < pauses[1] < pauses[2]


def test_a_read_timeout_is_retried(chat_server):
    chat_server.fault("timeout", delay=1.0).reply("ok")
    retries = []
    model = model_for(chat_server, timeout=0.3)
    reply = model.complete(HELLO, on_retry=lambda why, d: retries.append(why))
    assert reply.text == "ok" and retries == ["no reply within 0.3 s (the `timeout` setting)"]


def test_retries_are_bounded(chat_server):
    for _ in range(3):
        chat_server.fault("status", status=500)
    with pytest.raises(ModelError, match="kept failing .server error 500. after 3 attempts"):
        model_for(chat_server, max_retries=2).complete(HELLO)
    assert len(chat_server.requests) == 3


def test_endpoint_without_json_mode_is_asked_again_without_it_and_remembered():
    with ChatServer(reject_response_format=True) as server:
        server.reply("one").reply("two")
        model = model_for(server)
        assert model.complete(HELLO).text == "one"
        assert model.complete(HELLO).text == "two"
        assert ["response_format" in body for body in server.requests] == [True, False, False]


@pytest.mark.parametrize(
    "status, words",
    [
        (401, ["rejected the API key", "OPENAI_API_KEY"]),
        (404, ["model 'gpt-4o-mini' was not found at http://127.0.0.1", "--model"]),
        (400, ["rejected the request", "injected 400"]),
    ],
)
def test_permanent_errors_are_not_retried_and_explained(chat_server, status, words):
    chat_server.fault("status", status=status)
    with pytest.raises(KeyRejected if status == 401 else ModelError) as caught:  # 401: exit 2
        model_for(chat_server).complete(HELLO)
    for word in words:
        assert word in caught.value.message
    assert len(chat_server.requests) == 1


def test_a_200_that_is_not_json(chat_server):
    chat_server.fault("not_json")
    with pytest.raises(ModelError, match="answered 200 with a body that is not JSON"):
        model_for(chat_server).complete(HELLO)


def test_nothing_listening_names_the_url():
    model = ChatModel(
        Config(base_url="http://127.0.0.1:9/v1", max_retries=1), pause=lambda seconds: None
    )
    with pytest.raises(ModelError) as caught:
        model.complete(HELLO)
    assert "nothing is listening at http://127.0.0.1:9/v1" in caught.value.message
    assert "start the model server" in caught.value.message


def test_streaming_reply_is_assembled_with_usage(chat_server):
    text = '{"thought": "a long enough thought to need several chunks", "final": "done"}'
    chat_server.reply(text, usage={"prompt_tokens": 7, "completion_tokens": 5})
    reply = model_for(chat_server, stream=True).complete(HELLO)
    assert reply.text == text and reply.usage.prompt_tokens == 7
    assert chat_server.requests[0]["stream"] is True


def test_a_stream_that_ends_early_is_retried_then_reported(chat_server):
    chat_server.fault("truncated_stream").reply("complete")
    assert model_for(chat_server, stream=True).complete(HELLO).text == "complete"
    chat_server.fault("truncated_stream").fault("truncated_stream")
    with pytest.raises(ModelError, match="stream ended before the reply was complete"):
        model_for(chat_server, stream=True, max_retries=1).complete(HELLO)


def test_the_openai_client_timeouts_are_ours(chat_server):
    model = ChatModel(Config(base_url=chat_server.url, timeout=7, connect_timeout=2))
    client = model._get_client()
    assert client.max_retries == 0
    assert (client.timeout.read, client.timeout.connect) == (7, 2)


def test_no_key_and_no_local_url_explains_how_to_configure():
    model = ChatModel(Config(base_url="https://example.invalid/v1"))
    with pytest.raises(ModelError) as caught:
        model.complete(HELLO)
    for words in ("OPENAI_API_KEY", "11434", "llama.cpp"):
        assert words in caught.value.message


def test_a_reply_only_in_reasoning_content_is_used(chat_server):
    body = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "reasoning_content": '{"final": "from reasoning"}',
                },
            }
        ],
    }
    chat_server.fault("status", status=200, body=json.dumps(body))
    assert model_for(chat_server).complete(HELLO).text == '{"final": "from reasoning"}'


def completion_body(message):
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
        }
    )


def test_a_200_whose_message_is_null_is_an_empty_reply(chat_server):
    chat_server.fault("status", status=200, body=completion_body(None))
    assert model_for(chat_server).complete(HELLO).text == ""


@pytest.mark.parametrize(
    "event",
    [
        'event: error\ndata: {"error": {"message": "model overloaded"}}',
        'data: {"error": {"message": "model overloaded"}}',
    ],
)
def test_an_error_event_in_a_stream_is_retried_then_reported(chat_server, event):
    chat_server.fault("events", events=[event]).reply("whole")
    assert model_for(chat_server, stream=True).complete(HELLO).text == "whole"
    chat_server.fault("events", events=[event]).fault("events", events=[event])
    with pytest.raises(ModelError, match="model overloaded"):
        model_for(chat_server, stream=True, max_retries=1).complete(HELLO)


def test_messages_with_lone_surrogates_are_sent_as_valid_text(chat_server):
    chat_server.reply("ok")
    reply = model_for(chat_server).complete([{"role": "user", "content": "name \udcff.py"}])
    assert reply.text == "ok"
    assert chat_server.requests[0]["messages"][0]["content"] == "name \\udcff.py"


def test_each_message_is_encoded_once_and_only_the_last_requests_are_kept():
    history = [{"role": "user", "content": f"message {n}"} for n in range(3)]
    _, known = request_body({"messages": history}, {})
    _, again = request_body({"messages": [*history, {"role": "user", "content": "new"}]}, known)
    assert all(again[key] is known[key] for key in known)  # reused, not encoded again
    _, after = request_body({"messages": history[:1]}, again)  # compacted: fewer messages
    assert list(after) == [("user", "message 0")]  # what is no longer sent is not kept


def test_the_body_is_json_with_each_message_encoded_once(chat_server):
    conversation = [
        {"role": "system", "content": 'rules "quoted" \\ and ünïcode'},
        {"role": "user", "content": "tab\there, NUL \x00, line\u2028separator, name \udcff.py"},
    ]
    chat_server.reply("one").reply("two")
    model = model_for(chat_server, model="m", stream=True)
    model.complete(conversation, max_tokens=7)
    model.complete([*conversation, {"role": "assistant", "content": "one"}])
    first, second = chat_server.requests
    assert first["messages"][0] == conversation[0]
    assert first["messages"][1]["content"].endswith("name \\udcff.py")
    assert (first["max_tokens"], first["stream"], first["model"]) == (7, True, "m")
    assert second["messages"][:2] == first["messages"] and "max_tokens" not in second
    assert chat_server.headers[0]["content-type"] == "application/json"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "assistant"]), "content": st.text()}
        )
    ),
    st.dictionaries(st.sampled_from(["model", "stream", "max_tokens"]), st.integers() | st.text()),
)
def test_the_encoded_body_is_the_request_as_json(messages, rest):
    params = {**rest, "messages": messages}
    sent = json.loads(request_body(params, {})[0])
    assert {**sent, "messages": []} == {**rest, "messages": []}
    assert [m["content"] for m in sent["messages"]] == [
        m["content"].encode("utf-8", "backslashreplace").decode() for m in messages
    ]


def test_a_local_server_is_reached_directly_whatever_proxy_is_set(chat_server, monkeypatch):
    for variable in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(variable, "http://127.0.0.1:9")  # nothing listens there
    chat_server.reply("direct")
    assert model_for(chat_server).complete(HELLO).text == "direct"


@pytest.mark.parametrize(
    "body",
    [
        "[1, 2]",
        '{"choices": []}',
        '{"choices": "text"}',
        '{"choices": [null]}',
        '{"choices": [{"message": null, "finish_reason": 7}], "usage": "many"}',
        '{"choices": [{"message": {"content": {"a": 1}}}], "usage": {"prompt_tokens": -3}}',
        '{"choices": [{"message": {"content": ["x"]}, "finish_reason": "stop"}], '
        '"usage": {"prompt_tokens": true, "completion_tokens": "5"}}',
    ],
)
def test_a_200_of_the_wrong_shape_is_an_error_or_an_empty_reply_never_a_crash(chat_server, body):
    chat_server.fault("status", status=200, body=body)
    try:
        reply = model_for(chat_server, max_retries=1).complete(HELLO)
    except ModelError as error:
        assert "not JSON" in error.message or "without any choices" in error.message
    else:
        assert reply.text == "" and reply.usage.estimated  # no count of the server's is taken


@pytest.mark.parametrize(
    "flavour, counted", [("llama.cpp", True), ("llama-cpp-python", True), ("openai", False)]
)
def test_an_overflow_names_the_window_and_the_prompts_count_where_the_server_does(flavour, counted):
    from hephaistus.errors import ContextOverflow
    from hephaistus.testing.server_flavours import prompt_tokens

    messages = [{"role": "user", "content": "word " * 400}]
    with ChatServer(flavour=flavour, context_window=100) as server:
        with pytest.raises(ContextOverflow) as raised:
            model_for(server).complete(messages, max_tokens=50)
        assert raised.value.window == 100
        count = prompt_tokens(server.requests[0])
        assert raised.value.prompt_tokens == (count if counted else None)
