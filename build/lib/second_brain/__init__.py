"""Second Brain: an event-sourced memory service for people and AI agents."""

__version__ = "0.1.0"
