"""A log file read on demand (``FileBytes``) answers as its bytes do, and says so precisely when
it cannot: a file that shrinks under the read, a closed file, a pipe that has no offsets."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dshfuzz.checker import check_path, check_stream
from dshfuzz.cli import main
from dshfuzz.model import FileBytes, FileChangedError

@given(st.binary(max_size=300), st.lists(st.tuples(st.integers(-400, 400), st.integers(-400, 400)), max_size=12),
       st.integers(1, 64))
def test_slices_and_indices_are_the_bytes(tmp_path_factory, data: bytes, spans: list[tuple[int, int]], window: int) -> None:
    path = tmp_path_factory.mktemp("fb") / "log"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("dshfuzz.model._file._WINDOW", window)
        with FileBytes.open(path) as file:
            assert len(file) == len(data)
            for start, stop in spans:
                assert file[start:stop] == data[start:stop]
                assert file[start:] == data[start:] and file[:stop] == data[:stop]
                if -len(data) <= start < len(data):
                    assert file[start] == data[start]
                else:
                    with pytest.raises(IndexError):
                        file[start]


def test_a_file_that_shrinks_while_it_is_read_is_named_with_the_offset(tmp_path: Path, fixtures_dir: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes((fixtures_dir / "valid-v0.jsonl").read_bytes())
    with FileBytes.open(path) as file:
        os.truncate(path, 100)
        with pytest.raises(FileChangedError, match="shrank while it was read") as caught:
            check_stream(file)
    assert caught.value.filename == str(path) and isinstance(caught.value, OSError)


def test_dshfuzz_check_reports_a_shrinking_file_as_unreadable(tmp_path: Path, fixtures_dir: Path, monkeypatch, capsys) -> None:
    path = tmp_path / "s.jsonl.zstd"
    path.write_bytes((fixtures_dir / "valid-v0.jsonl.zstd").read_bytes())
    opened = FileBytes.open

    def open_then_truncate(name):
        file = opened(name)
        os.truncate(name, 200)
        return file

    monkeypatch.setattr(FileBytes, "open", staticmethod(open_then_truncate))
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"dshfuzz check: cannot read {path}: the file shrank while it was read")


def test_a_closed_file_refuses_to_be_read(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"x" * 10)
    file = FileBytes.open(path)
    file.close()
    file.close()
    with pytest.raises(ValueError, match="closed"):
        file[0:5]


def test_a_pipe_is_read_whole_when_opened(fixtures_dir: Path) -> None:
    data = (fixtures_dir / "valid-v0.jsonl.zstd").read_bytes()
    proc = subprocess.run(
        [sys.executable, "-m", "dshfuzz", "check", "--json", "/dev/stdin"],
        input=data, capture_output=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert b'"events":76' in proc.stdout


def test_check_path_reads_a_file_as_the_check_goes(tmp_path: Path, fixtures_dir: Path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_bytes((fixtures_dir / "valid-v0.jsonl").read_bytes())
    report = check_path(path)
    assert report.ok and report.events == 76
    with pytest.raises(IsADirectoryError):
        check_path(tmp_path)


def test_without_pread_a_file_is_read_by_seeking(tmp_path: Path, fixtures_dir: Path, monkeypatch) -> None:
    """Windows has no ``os.pread``: the same reads go through ``lseek`` and ``read``."""
    import dshfuzz.model._file as file_module

    monkeypatch.setattr(file_module, "_pread", file_module._seek_and_read)
    for name in ("valid-v0.jsonl", "valid-v0.jsonl.zstd"):
        path = tmp_path / name
        path.write_bytes((fixtures_dir / name).read_bytes())
        report = check_path(path)
        assert report.ok and report.events == 76, name
