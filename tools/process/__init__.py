"""Processes Nerve starts: process groups, cgroup scopes, owners and the reaper, background tasks."""

__all__: list[str] = []
