"""Debian's promtool (package prometheus) over the Prometheus rules in deploy/: `check rules`
and rule unit tests (`test rules`), here and against series a test scraped."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml

from tests.support.services import skip_or_fail

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "rules.yml"
RULE_TESTS = RULES.with_name("rules.test.yml")


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    """promtool's run with `args`; skipped where it is not installed (failed under
    RESEARCHBOT_REQUIRE_SERVICES=1: CI installs it)."""
    found = shutil.which("promtool")
    if found is None:
        skip_or_fail("promtool not found: apt-get install prometheus")
    assert found is not None
    return subprocess.run([found, *args], capture_output=True, text=True, timeout=60)


def recorded_names() -> set[str]:
    document = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    return {rule["record"] for group in document["groups"] for rule in group["rules"]
            if "record" in rule}


def rule_test(folder: Path, series: dict[str, list[float]],
              expected: dict[str, float]) -> Path:
    """A rule unit-test file in `folder`: each of `series` (a series selector and its samples,
    a minute apart) as input; each of `expected` (a recorded series and its value) checked
    at the last sample, to within 1e-9 (promtool compares values exactly: a ratio computed
    here may differ from Prometheus's in its last bit)."""
    minutes = max(len(values) for values in series.values()) - 1
    document = {"rule_files": [str(RULES)], "evaluation_interval": "1m", "tests": [{
        "interval": "1m",
        "input_series": [{"series": name, "values": " ".join(f"{v:g}" for v in values)}
                         for name, values in series.items()],
        "promql_expr_test": [{"expr": f"abs({name} - {value!r}) < bool 1e-9",
                              "eval_time": f"{minutes}m",
                              "exp_samples": [{"labels": "{}", "value": 1}]}
                             for name, value in expected.items()]}]}
    path = folder / "scraped.test.yml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path
