"""The Prometheus rules in deploy/prometheus: valid for promtool, and recording what their
unit tests (rules.test.yml: series in, recorded values out) say they record."""

from pathlib import Path

import pytest

from tests.support.promtool import RULE_TESTS, RULES, promtool, recorded_names, rule_test

pytestmark = pytest.mark.system


def test_the_rules_file_is_valid_and_records_the_designs_rates() -> None:
    checked = promtool("check", "rules", str(RULES))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 2 rules found" in checked.stdout
    assert recorded_names() == {"researchbot:cache_hit_rate:ratio_rate5m",
                                "researchbot:source_fetch_success_rate:ratio_rate5m"}


def test_the_rules_unit_tests_pass() -> None:
    tested = promtool("test", "rules", str(RULE_TESTS))
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_a_wrong_expectation_fails_the_rule_tests(tmp_path: Path) -> None:
    """The unit tests can fail: 1 hit in 4 look-ups is not a hit rate of one half."""
    series = {'cache_lookups_total{result="hit"}': [0, 1, 2, 3, 4, 5, 6],
              'cache_lookups_total{result="miss"}': [0, 3, 6, 9, 12, 15, 18]}
    right = promtool("test", "rules", str(rule_test(
        tmp_path, series, {"researchbot:cache_hit_rate:ratio_rate5m": 0.25})))
    assert right.returncode == 0, right.stdout + right.stderr
    wrong = promtool("test", "rules", str(rule_test(
        tmp_path, series, {"researchbot:cache_hit_rate:ratio_rate5m": 0.5})))
    assert wrong.returncode == 1
    assert "FAILED" in wrong.stdout + wrong.stderr
