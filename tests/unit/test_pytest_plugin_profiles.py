"""The pytest plugin asks first (issue 19, item 6): it registers and loads a dshfuzz
Hypothesis profile only when asked (``--dshfuzz-profile``, ``DSHFUZZ_PROFILE`` or the ini key
``dshfuzz_profile``), and never replaces a profile the project chose itself.

Each project runs in a fresh pytest process (``runpytest_subprocess``): Hypothesis' profile is
process-wide, so an in-process run would only see the profile of the suite running it. The
plugin is the installed one, loaded through its ``pytest11`` entry point as in any project.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

# what the project's one test sees: the active profile, its examples, and any dshfuzz profile registered
OBSERVE = '''
import json
from pathlib import Path

from hypothesis import settings
from hypothesis.errors import InvalidArgument


def registered(name):
    try:
        settings.get_profile(name)
    except InvalidArgument:
        return False
    return True


def test_observe():
    Path("observed.json").write_text(json.dumps({
        "profile": settings.get_current_profile_name(),
        "max_examples": settings.default.max_examples,
        "dshfuzz_registered": [n for n in ("dshfuzz-dev", "dshfuzz-ci", "dshfuzz-nightly") if registered(n)],
    }))
'''

USER_PROFILE = '''
from hypothesis import settings

settings.register_profile("mine", max_examples=7)
settings.load_profile("mine")
'''


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A project with one test that records what Hypothesis' active profile is; nothing in
    the environment asks for a profile, and Hypothesis' own CI detection is off."""
    for name in ("DSHFUZZ_PROFILE", "CI", "TF_BUILD"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_observe=OBSERVE)
    return pytester


def observe(project: pytest.Pytester, *args: str) -> tuple[dict[str, object], str]:
    result = project.runpytest_subprocess("-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=1)
    return json.loads(Path(project.path / "observed.json").read_text()), result.stdout.str()


def test_a_project_that_does_not_ask_keeps_hypothesis_own_profile(project: pytest.Pytester) -> None:
    seen, out = observe(project)
    assert seen == {"profile": "default", "max_examples": 100, "dshfuzz_registered": []}
    assert "dshfuzz:" not in out


def test_under_ci_a_project_that_does_not_ask_keeps_hypothesis_own_ci_profile(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    seen, _ = observe(project)
    assert seen["profile"] == "ci" and seen["dshfuzz_registered"] == []


def _ask(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, way: str, name: str) -> list[str]:
    """Ask for the dshfuzz profile ``name`` one way; the command-line arguments that asking needs."""
    if way == "option":
        return [f"--dshfuzz-profile={name}"]
    if way == "environment":
        monkeypatch.setenv("DSHFUZZ_PROFILE", name)
    elif way == "pytest.ini":
        project.makeini(f"[pytest]\ndshfuzz_profile = {name}\n")
    elif way == "pyproject.toml":
        project.makepyprojecttoml(f'[tool.pytest.ini_options]\ndshfuzz_profile = "{name}"\n')
    else:  # pragma: no cover
        raise AssertionError(way)
    return []


WAYS = ["option", "environment", "pytest.ini", "pyproject.toml"]


@pytest.mark.parametrize("way", WAYS)
def test_asking_loads_the_dshfuzz_profile(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, way: str) -> None:
    seen, out = observe(project, *_ask(project, monkeypatch, way, "nightly"))
    assert seen == {"profile": "dshfuzz-nightly", "max_examples": 5000, "dshfuzz_registered": ["dshfuzz-nightly"]}
    assert "dshfuzz: hypothesis profile 'nightly'" in out


@pytest.mark.parametrize("ci", [False, True], ids=["outside-ci", "under-ci"])
def test_auto_is_ci_under_ci_and_dev_otherwise(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: bool) -> None:
    if ci:
        monkeypatch.setenv("CI", "true")
    seen, _ = observe(project, *_ask(project, monkeypatch, "pyproject.toml", "auto"))
    assert seen["profile"] == ("dshfuzz-ci" if ci else "dshfuzz-dev")
    assert seen["max_examples"] == (200 if ci else 50)


def test_the_option_outranks_the_environment_which_outranks_the_ini(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makeini("[pytest]\ndshfuzz_profile = nightly\n")
    monkeypatch.setenv("DSHFUZZ_PROFILE", "ci")
    assert observe(project)[0]["profile"] == "dshfuzz-ci"
    assert observe(project, "--dshfuzz-profile=dev")[0]["profile"] == "dshfuzz-dev"


@pytest.mark.parametrize("way", WAYS)
def test_a_profile_the_project_loaded_in_its_conftest_survives_any_ask(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, way: str
) -> None:
    project.makeconftest(USER_PROFILE)
    seen, out = observe(project, *_ask(project, monkeypatch, way, "ci"))
    assert seen["profile"] == "mine" and seen["max_examples"] == 7
    assert "hypothesis profile 'mine' (the project's; dshfuzz profile 'ci' not loaded)" in out


def test_a_profile_named_by_hypothesis_own_option_survives_an_ask(project: pytest.Pytester) -> None:
    project.makeconftest('from hypothesis import settings\nsettings.register_profile("mine", max_examples=7)\n')
    seen, _ = observe(project, "--hypothesis-profile=mine", "--dshfuzz-profile=nightly")
    assert seen["profile"] == "mine" and seen["max_examples"] == 7


def test_an_unknown_profile_is_a_usage_error(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSHFUZZ_PROFILE", "weekly")
    result = project.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "dshfuzz profile 'weekly': choose one of dev, ci, nightly, auto" in result.stderr.str()


def test_the_witness_fixture_works_without_a_dshfuzz_profile(project: pytest.Pytester) -> None:
    project.makepyfile(test_observe="")
    project.makepyfile(test_witness='''
from hypothesis import given, settings, strategies as st

@settings(database=None)
@given(n=st.integers(0, 1000))
def test_small(n, dshfuzz_witness):
    dshfuzz_witness.record(b'{"seq":%d}\\n' % n, signature="test|small")
    assert n < 10
''')
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "--dshfuzz-save", "--dshfuzz-corpus=witnesses")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*dshfuzz minimal log*", '*{"seq":10}*'])
    assert list((project.path / "witnesses").glob("*/meta.json"))
