"""Every golden file under tests/golden (``*.tir`` and ``*.py`` with ``# RUN:`` lines)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402

FILES = runner.golden_files()


@pytest.mark.parametrize("path", FILES, ids=[os.path.relpath(p, runner.HERE) for p in FILES])
def test_golden(path):
    assert runner.check_file(path) > 0


def test_there_are_golden_files():
    assert len([p for p in FILES if p.endswith(".tir")]) >= 3
