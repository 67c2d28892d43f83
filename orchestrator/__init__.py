"""interregion: measure latency and throughput between cloud regions."""

__version__ = "0.1.0"
