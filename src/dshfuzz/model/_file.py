"""A log file's bytes read on demand, so that a streamed read never holds the file whole.

:class:`FileBytes` answers ``len()``, ``[i]`` and ``[start:stop]`` as ``bytes`` would, each
slice read from the file by offset (``os.pread``); the small reads of the zstd frame
scanner are served from one window of the file read ahead. A streamed read
(:func:`~dshfuzz.model.stream_log`) takes it wherever it takes ``bytes``: the plaintext of a
plain log goes through the reader in blocks, and a zstd frame is read when it is decoded,
then dropped (its :class:`~dshfuzz.model.Frame` reads it again when asked).

A pipe or a device, which cannot be read by offset, is read whole when opened. The file is
not mapped (a log truncated under a mapping kills the process with SIGBUS): a
file that shrinks while it is read raises :class:`FileChangedError` (an ``OSError``) naming
the file and the offset, which the command-line entry points report as an unreadable file.
Bytes appended while it is read are not seen: the length is the file's at :meth:`open`.
"""

from __future__ import annotations

import errno
import os
import stat
from os import PathLike
from types import TracebackType
from typing import Any, SupportsIndex, overload

__all__ = ["FileBytes", "FileChangedError"]

_WINDOW = 64 * 1024


class FileChangedError(OSError):
    """The file shrank while it was being read: a read came back short of the length it had."""


class FileBytes:
    """The bytes of the file at ``path``, as long as it was when opened, read on demand.

    Holds an open descriptor until :meth:`close` (or the end of a ``with`` block); slicing
    after that raises ``ValueError``. Slices are ``bytes``; steps other than 1 are refused.
    """

    __slots__ = ("path", "_fd", "_size", "_window_start", "_window")

    def __init__(self, path: str, fd: int | None, size: int, whole: bytes = b"") -> None:
        self.path = path
        self._fd = fd
        self._size = size
        self._window_start = 0
        self._window = whole

    @classmethod
    def open(cls, path: str | PathLike[str]) -> FileBytes:
        """Open ``path`` for reading; raises ``OSError`` as ``open`` does."""
        name = str(os.fspath(path))
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            status = os.fstat(fd)
            if stat.S_ISREG(status.st_mode):
                return cls(name, fd, status.st_size)
            # a pipe or a device has no length to read by offset: its bytes are read once, whole
            with os.fdopen(fd, "rb", closefd=False) as stream:
                whole = stream.read()
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        return cls(name, None, len(whole), whole)

    def close(self) -> None:
        fd, self._fd = self._fd, None
        self._window = b""
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> FileBytes:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def __len__(self) -> int:
        return self._size

    def __repr__(self) -> str:
        state = "closed" if self._fd is None else f"{self._size} bytes"
        return f"FileBytes({self.path!r}, {state})"

    @overload
    def __getitem__(self, key: slice, /) -> bytes: ...

    @overload
    def __getitem__(self, key: SupportsIndex, /) -> int: ...

    def __getitem__(self, key: Any, /) -> Any:
        if key.__class__ is slice:
            start, stop = key.start, key.stop
            # the reader's slices: ascending, within the file, mostly within the window
            if start.__class__ is int and stop.__class__ is int and key.step is None and 0 <= start <= stop <= self._size:
                base = self._window_start
                if base <= start and stop - base <= len(self._window):
                    return self._window[start - base : stop - base]
                return self.read(start, stop - start) if stop > start else b""
            start, stop, step = key.indices(self._size)
            if step != 1:
                raise ValueError("FileBytes slices take no step")
            return self.read(start, stop - start) if stop > start else b""
        index = key.__index__()
        if index < 0:
            index += self._size
        if not 0 <= index < self._size:
            raise IndexError("FileBytes index out of range")
        return self.read(index, 1)[0]

    def read(self, offset: int, size: int) -> bytes:
        """``size`` bytes at ``offset`` (within the length); a small read goes through the window."""
        window, base = self._window, self._window_start
        if base <= offset and offset + size <= base + len(window):
            return window[offset - base : offset - base + size]
        if size >= _WINDOW:
            return self._pread(offset, size)
        self._window = self._pread(offset, min(_WINDOW, self._size - offset))
        self._window_start = offset
        return self._window[:size]

    def _pread(self, offset: int, size: int) -> bytes:
        if self._fd is None:
            raise ValueError(f"read of closed file {self.path}")
        data = _pread(self._fd, size, offset)
        while len(data) < size:
            more = _pread(self._fd, size - len(data), offset + len(data))
            if not more:
                raise FileChangedError(
                    errno.EIO, f"the file shrank while it was read (nothing at byte {offset + len(data)}, "
                    f"of {self._size} when opened)", self.path,
                )
            data += more
        return data


def _seek_and_read(fd: int, size: int, offset: int) -> bytes:
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)


_pread = getattr(os, "pread", _seek_and_read)  # Windows has no pread
