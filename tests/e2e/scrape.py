"""A running server's /metrics, read as Prometheus reads it, for the end-to-end tests."""

import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def scrape(port: int, token: str) -> dict[tuple, float]:
    """{(sample name, *its label values in the order of the label names): value} of 127.0.0.1:port/metrics."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    return {
        (sample.name, *(value for _, value in sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def total(scrapes, key) -> float:
    """One sample summed over several scrapes (a scrape without it counts 0)."""
    return sum(samples.get(key, 0.0) for samples in scrapes)
