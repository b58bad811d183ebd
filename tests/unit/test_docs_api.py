"""The API reference (docs/api.md, docs/api-language.md, built by mkdocs in .ci/run)
covers every public entry point, and each has a docstring to show."""
import os
import re

import tilejit
import tilejit.testing

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENTRY_POINTS = ["jit", "JITFunction", "KernelInterface", "compile", "cdiv", "next_power_of_2",
                "autotune", "heuristics", "Config", "CompilationError", "OutOfBoundsError",
                "OffsetOverflowError", "MissingDependencyError"]
TESTING = ["do_bench", "assert_close", "perf_report", "Benchmark"]


def _documented(page):
    text = open(os.path.join(ROOT, "docs", page)).read()
    return {m.split(".")[-1] for m in re.findall(r"^::: ([\w.]+)", text, re.M)}


def test_every_entry_point_is_in_the_reference_with_a_docstring():
    listed = _documented("api.md")
    for name in ENTRY_POINTS:
        obj = getattr(tilejit, name)
        assert (obj.__doc__ or "").strip(), f"tilejit.{name} has no docstring"
        assert name in listed, f"tilejit.{name} is missing from docs/api.md"
    for name in TESTING:
        assert (getattr(tilejit.testing, name).__doc__ or "").strip()
        assert name in listed, f"tilejit.testing.{name} is missing from docs/api.md"


def test_language_reference_documents_the_whole_module():
    text = open(os.path.join(ROOT, "docs", "api-language.md")).read()
    assert re.search(r"^::: tilejit\.language$", text, re.M)
    assert re.search(r"^::: tilejit\.language\.math$", text, re.M)


def test_mkdocs_nav_lists_only_existing_pages():
    nav = open(os.path.join(ROOT, "mkdocs.yml")).read()
    pages = re.findall(r":\s+([\w./-]+\.md)\s*$", nav, re.M)
    assert "getting-started.md" in pages and "coming-from-triton.md" in pages
    for page in pages:
        assert os.path.exists(os.path.join(ROOT, "docs", page)), page
