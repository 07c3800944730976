"""The house: the folders are the packages (no link anywhere), and the repository is code, not
data (experiments/results/README.md says where the data went).

That a checkout without links builds a wheel of only the project's names, which imports on its
own: ``tests/repository/test_installed_names.py``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# 12 MB, and room for the luck corrections' stores of the members' full cards (about 120 KB a
# card's 1,000 deals: experiments/results/luck/corrections/, docs/luck.md)
MAX_TRACKED_BYTES = 12_500_000
MAX_FILE_BYTES = 1_000_000
# Over MAX_FILE_BYTES only what the package ships as data: weights and the suites' deal sets.
LARGE_ALLOWED = ("agents/weights/", "craits/benchmark/deals/")


def tracked() -> list[tuple[str, str]]:
    """``(mode, path)`` of every file git tracks."""
    out = subprocess.run(
        ["git", "ls-files", "-s", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    rows = []
    for entry in filter(None, out.split("\0")):
        meta, path = entry.split("\t", 1)
        rows.append((meta.split()[0], path))
    return rows


def test_no_symbolic_link_is_tracked_or_lies_in_the_source_folders() -> None:
    links = [path for mode, path in tracked() if mode == "120000"]
    assert not links, f"tracked symbolic links: {links}"
    on_disk = [
        str(p.relative_to(ROOT))
        for top in ("craits_env", "craits", "agents", "training", "experiments", "tests", "docs")
        for p in (ROOT / top).rglob("*")
        if p.is_symlink()
    ]
    assert not on_disk, f"symbolic links in the source folders: {on_disk}"


def test_the_repository_is_code_not_data() -> None:
    sizes = {path: (ROOT / path).stat().st_size for _, path in tracked() if (ROOT / path).exists()}
    checkpoints = [p for p in sizes if p.endswith((".pt", ".pth", ".ckpt"))]
    assert not checkpoints, f"checkpoints are not committed (experiments/results): {checkpoints}"
    large = [
        f"{p} ({n:,} bytes)"
        for p, n in sizes.items()
        if n > MAX_FILE_BYTES and not p.startswith(LARGE_ALLOWED)
    ]
    assert not large, f"tracked files over {MAX_FILE_BYTES:,} bytes: {large}"
    total = sum(sizes.values())
    assert total <= MAX_TRACKED_BYTES, f"{total:,} tracked bytes, over {MAX_TRACKED_BYTES:,}"


def test_the_checks_find_what_they_look_for(tmp_path: Path) -> None:
    """``tracked`` reads git's modes: a repository holding a link reports it as one."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "target").write_text("x")
    (tmp_path / "link").symlink_to("target")
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    out = subprocess.run(
        ["git", "ls-files", "-s"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    assert any(line.startswith("120000") and line.endswith("\tlink") for line in out.splitlines())
