"""Official coverage, held to the official layers themselves.

Specification: measuring coverage changes no verdict of any layer; every official refusal
whose message one refusal site's template produces is credited to that site (the site was
reached); the valid fixture reaches no refusal site; the site table is every ``throw`` of
the covered packages, and the list of unreachable sites names only sites of the installed
packages, with their current message templates and one of the three allowed reasons.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from dshfuzz.model import read_log
from dshfuzz.mutators import MUTATORS, Inapplicable, apply_seeded
from dshfuzz.oracle.official import (
    UNREACHABLE_REASONS,
    OfficialOracle,
    RefusalSite,
    unavailable_reason,
    unreachable_sites,
)

REPO = Path(__file__).resolve().parents[2]
PACKAGES = REPO / "src/dshfuzz/oracle/official/js/node_modules/@deepseek-ai"


@pytest.fixture(scope="module")
def covered() -> Iterator[OfficialOracle]:
    """An official oracle measuring coverage by block (the finer of the two)."""
    if unavailable_reason() is not None:
        pytest.skip(f"official oracle unavailable ({unavailable_reason()}); run `make setup` first")
    with OfficialOracle(coverage="block") as oracle:
        yield oracle


@pytest.fixture(scope="module")
def refused_logs(tmp_path_factory: pytest.TempPathFactory, fixtures_dir: Path) -> list[Path]:
    """Logs the official layers refuse in many ways: a mutant of every mutator (two seeds each)
    of the valid fixture, and the corpus's witnesses."""
    out = tmp_path_factory.mktemp("refused")
    source = read_log(fixtures_dir / "valid-v0.jsonl")
    paths: list[Path] = []
    for name, mutator in sorted(MUTATORS.items()):
        for seed in (1, 2):
            try:
                mutant = apply_seeded(mutator, source, seed)
            except Inapplicable:
                continue
            path = out / f"{name}-{seed}{mutant.suffix}"
            path.write_bytes(mutant.data)
            paths.append(path)
    paths += sorted(p for p in (REPO / "corpus").glob("*/*.jsonl*"))
    return paths


def _template(message: str) -> re.Pattern[str] | None:
    """The messages a site's template produces: a template literal's text with each ``${…}``
    as anything, a string literal's text; ``None`` for a template that is an expression."""
    if len(message) > 1 and message[0] == message[-1] == "`":
        parts = re.split(r"\$\{[^}]*\}", message[1:-1])
        return re.compile(".*".join(re.escape(p) for p in parts), re.S)
    if len(message) > 1 and message[0] == message[-1] and message[0] in "\"'":
        return re.compile(re.escape(message[1:-1]))
    return None


def test_coverage_changes_no_verdict(covered: OfficialOracle, official: OfficialOracle, refused_logs: list[Path],
                                     fixtures_dir: Path) -> None:
    for path in [fixtures_dir / "valid-v0.jsonl", fixtures_dir / "valid-v0.jsonl.zstd", *refused_logs]:
        plain, measured = official.check_report(path=path), covered.check_report(path=path)
        assert measured == plain, f"{path.name}: coverage changed a verdict\n without: {plain}\n with: {measured}"


def test_every_refusal_is_credited_to_a_reached_site(covered: OfficialOracle, refused_logs: list[Path]) -> None:
    patterns = [(site, _template(site.message)) for site in covered.refusal_sites()]
    credited = 0
    for path in refused_logs:
        report = covered.check_report(path=path)
        reached = covered.reached_sites
        for layer, verdict in report.layers.items():
            if verdict.ok or verdict.error is None:
                continue
            message = verdict.error.message
            candidates = [site.id for site, pattern in patterns if pattern is not None and pattern.search(message)]
            if not candidates:
                continue  # thrown outside the covered packages (zod, cordis) or by an expression template
            assert reached & set(candidates), (
                f"{path.name}: {layer} refused with {message[:200]!r}, which only {candidates} can throw, "
                "yet none was reached"
            )
            credited += 1
    assert credited >= 100, f"only {credited} refusals matched a site's template: the test proves little"


def test_the_valid_fixture_reaches_no_refusal_site(fixtures_dir: Path) -> None:
    if unavailable_reason() is not None:
        pytest.skip(f"official oracle unavailable ({unavailable_reason()}); run `make setup` first")
    with OfficialOracle(coverage="function") as fresh:
        for name in ("valid-v0.jsonl", "valid-v0.jsonl.zstd"):
            fresh.check_report(path=fixtures_dir / name)
        assert fresh.reached_sites == frozenset()


def test_the_site_table_is_every_throw_of_the_covered_packages(covered: OfficialOracle) -> None:
    sites = covered.refusal_sites()
    by_package: dict[str, list[RefusalSite]] = {}
    for site in sites:
        by_package.setdefault(site.package, []).append(site)
    assert set(by_package) == {
        "dsh-session", "dsh-session-format", "dsh-session-format-v0-to-v1", "dsh-session-persistence",
        "dsh-session-persistence-jsonl", "dsh-token-meter", "dsh-invariants",
    }
    for package, listed in by_package.items():
        lines = (PACKAGES / package / listed[0].file).read_text("utf-8").splitlines()
        for site in listed:
            assert lines[site.line - 1][site.column:].startswith("throw"), f"{site.id} is no throw statement"
        # every line with a throw statement outside a comment has its site
        code = [re.sub(r"/\*.*?\*/", "", text).split("//")[0] for text in lines]
        code_lines = {n for n, text in enumerate(code, 1)
                      if re.search(r"(^|[;{})\s])throw\b", text) and not text.lstrip().startswith("*")}
        unlisted = sorted(code_lines - {s.line for s in listed})
        assert not unlisted, f"{package}: throws at lines {unlisted} have no site"
    assert len({s.id for s in sites}) == len(sites)


def test_the_unreachable_list_names_current_sites_with_allowed_reasons(covered: OfficialOracle) -> None:
    table = {site.id: site for site in covered.refusal_sites()}
    for entry in unreachable_sites().values():
        assert entry.id in table, f"{entry.id} is listed unreachable but is no site of the installed packages: moved or gone"
        assert table[entry.id].message == entry.message, (
            f"{entry.id}: its message template changed to {table[entry.id].message!r} (listed: {entry.message!r})"
        )
        assert entry.reason in UNREACHABLE_REASONS and entry.why.strip(), f"{entry.id}: a reason and a why"
