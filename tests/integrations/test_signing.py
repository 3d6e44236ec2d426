"""Known-answer vectors for delivery signatures (computed independently with openssl)."""

from standardwebhooks import Webhook as StandardWebhook

from integrations.signing import service_signature, signed_headers, standard_webhooks_signature

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def test_service_signature_known_answer():
    # echo -n '1700000000.{"id":"1","evento":"webhook.teste"}' | openssl dgst -sha256 -hmac "$SECRET"
    body = b'{"id":"1","evento":"webhook.teste"}'

    assert service_signature(SECRET, 1700000000, body) == (
        "77620b2785fd616074961df0253ac9327f00390c51900661df371c55ce87e8f4"
    )


def test_standard_webhooks_signature_matches_the_specification_example():
    # The example of the Standard Webhooks specification.
    signature = standard_webhooks_signature(SECRET, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, b'{"test": 2432232314}')

    assert signature == "g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_headers_carry_one_signature_per_secret_and_the_standard_library_accepts_them():
    import time

    body = b'{"evento":"ticket.resolvido"}'
    other = "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWY="
    now = int(time.time())

    headers = signed_headers(
        secrets=[SECRET, other], delivery_id="d-1", event_kind="ticket.resolvido", timestamp=now, body=body
    )

    assert headers["X-Service-Event"] == "ticket.resolvido"
    assert headers["X-Service-Delivery"] == headers["webhook-id"] == "d-1"
    assert headers["X-Service-Signature"] == (
        f"t={now},v1={service_signature(SECRET, now, body)},v1={service_signature(other, now, body)}"
    )
    assert len(headers["webhook-signature"].split(" ")) == 2
    standard = {k: v for k, v in headers.items() if k.startswith("webhook-")}
    for secret in (SECRET, other):
        assert StandardWebhook(secret).verify(body, standard) == {"evento": "ticket.resolvido"}
