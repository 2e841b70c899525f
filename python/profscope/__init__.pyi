"""Typed API of the profscope package (docs/python.md)."""

import os
from typing import Any, Dict, List, Optional, Sequence, Union

import pyarrow

from ._profscope import ProfscopeError as ProfscopeError

__version__: str
PathLike = Union[str, os.PathLike[str]]

class Report:
    @property
    def json(self) -> Dict[str, Any]: ...
    @property
    def headline(self) -> List[str]: ...
    @property
    def verdict(self) -> Dict[str, Any]: ...
    @staticmethod
    def tables() -> List[str]: ...
    @staticmethod
    def describe_tables() -> Dict[str, str]: ...
    def rows(self, name: str) -> List[Dict[str, Any]]: ...
    def table(self, name: str) -> pyarrow.Table: ...
    def to_markdown(self, full: bool = ...) -> str: ...

class Tables:
    @property
    def events(self) -> pyarrow.Table: ...
    @property
    def steps(self) -> pyarrow.Table: ...

class Diff:
    @property
    def json(self) -> Dict[str, Any]: ...
    @property
    def passed(self) -> bool: ...

def analyze(
    *paths: PathLike,
    only: Optional[Sequence[str]] = ...,
    min_gap_us: float = ...,
    top: int = ...,
    batch: Optional[int] = ...,
    phase: Optional[str] = ...,
    expected_ranks: Optional[int] = ...,
    jobs: Optional[int] = ...,
    cache: Union[bool, PathLike] = ...,
    detail: str = ...,
    progress: bool = ...,
) -> Report: ...
def load(*paths: PathLike) -> Tables: ...
def diff(base: PathLike, new: PathLike, fail_on: Optional[str] = ...) -> Diff: ...
def memory(*paths: PathLike, tp: Optional[int] = ..., dp: Optional[int] = ...) -> Dict[str, Any]: ...
