"""The time-limit ladder: soft < hard < stale-claim window < the broker's visibility timeout,
checked from the settings in force, enforced when settings load, and carried to the tasks."""

import os
import subprocess
import sys

from django.conf import settings

from memoryweb.queue import registered_task


def test_the_time_limits_are_in_order_in_the_settings():
    stale, visibility = settings.MEMORYWEB_EXTRACT_STALE_SECONDS, settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    assert settings.MEMORYWEB_EXTRACT_SOFT_TIME_LIMIT < settings.MEMORYWEB_EXTRACT_TIME_LIMIT < stale < visibility
    assert settings.MEMORYWEB_INDEX_SOFT_TIME_LIMIT < settings.MEMORYWEB_INDEX_TIME_LIMIT < stale


def test_the_extraction_and_indexing_tasks_carry_their_limits():
    extract, index = registered_task("memories.extract_episode"), registered_task("retrieval.index_scope")
    assert (extract.soft_time_limit, extract.time_limit) == (settings.MEMORYWEB_EXTRACT_SOFT_TIME_LIMIT, settings.MEMORYWEB_EXTRACT_TIME_LIMIT)
    assert (index.soft_time_limit, index.time_limit) == (settings.MEMORYWEB_INDEX_SOFT_TIME_LIMIT, settings.MEMORYWEB_INDEX_TIME_LIMIT)


def _check(**env):
    return subprocess.run([sys.executable, "-m", "memoryweb.cli", "check"], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120)


def test_a_stale_window_not_above_the_hard_limit_refuses_to_start_in_one_sentence():
    result = _check(MEMORYWEB_EXTRACT_TIME_LIMIT="600", MEMORYWEB_EXTRACT_STALE_SECONDS="600")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "MEMORYWEB_EXTRACT_TIME_LIMIT (600) must be smaller than MEMORYWEB_EXTRACT_STALE_SECONDS (600)" in result.stderr


def test_a_visibility_timeout_below_the_stale_window_is_refused():
    result = _check(CELERY_VISIBILITY_TIMEOUT="60")
    assert result.returncode == 2
    assert "MEMORYWEB_EXTRACT_STALE_SECONDS (900) must be smaller than CELERY_VISIBILITY_TIMEOUT (60)" in result.stderr
