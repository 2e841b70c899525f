"""The native module: the CLI run in-process (python/src/lib.rs)."""

from typing import Any, List, Tuple

__version__: str

class ProfscopeError(RuntimeError):
    """An error profscope reported, with the message the CLI prints."""

def run(argv: List[str]) -> Tuple[str, int]:
    """Runs ``profscope <argv...>``; returns (stdout, exit code). The GIL is released."""

def load_tables(paths: List[str]) -> List[Tuple[str, Any]]:
    """Ingests ``paths``; returns (table name, Arrow C stream capsule) pairs. The GIL is released."""

def bound(tool: str, json: str, max_bytes: int) -> str:
    """The JSON result of ``tool`` bounded to ``max_bytes`` by profscope's trimmer; returns the
    wrapper's JSON text. Raises ProfscopeError when the bound cannot hold the verdict and the
    headline. The GIL is released."""
