"""Reading /metrics in tests: a scrape through the HTTP client, parsed into samples."""

from django.test import Client, override_settings
from prometheus_client.parser import text_string_to_metric_families

TOKEN = "metrics-token-for-tests-0123456789abcdef"


class Samples(dict):
    """{(sample name, ((label, value), ...)): value} of one scrape."""

    @classmethod
    def parse(cls, text: str) -> "Samples":
        return cls(
            ((sample.name, tuple(sorted(sample.labels.items()))), sample.value)
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        )

    def value(self, name: str, **labels) -> float:
        return self.get((name, tuple(sorted(labels.items()))), 0.0)

    def named(self, name: str) -> dict[tuple, float]:
        return {labels: value for (sample, labels), value in self.items() if sample == name}

    def since(self, earlier: "Samples", name: str, **labels) -> float:
        return self.value(name, **labels) - earlier.value(name, **labels)


def scrape() -> Samples:
    """What Prometheus would read from this process now (the test process keeps its metrics in memory)."""
    with override_settings(METRICS_TOKEN=TOKEN):
        response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content
    return Samples.parse(response.content.decode())
