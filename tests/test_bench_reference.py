"""`make bench` compares the product with a bare reference that reads the same tables through the same models
(bench/reference). The reference registers the product's model modules by hand; a model module imported on the
way that it does not register breaks every bench run, so its URLconf must load."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_bench_reference_loads_every_model_it_reads(tmp_path):
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "bench.reference.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'reference.sqlite3'}",
        "BENCH_ORGANIZATION_ID": "00000000-0000-0000-0000-000000000000",
        "SECRET_KEY": "bench-reference-test",
    }
    loaded = subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); import bench.reference.urls; print('ok')"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.strip() == "ok"
