"""servertune: tuned, measured serving configuration from a short description of a workload.

`import servertune` stays cheap: it imports no HTTP client and no server. The submodules
(`workload`, `sizing`, `render`, `http`, `cache`, `asgi`, `bench`) are imported on use.
"""

from __future__ import annotations

__version__ = "0.1.0.dev0"

__all__ = ["__version__"]
