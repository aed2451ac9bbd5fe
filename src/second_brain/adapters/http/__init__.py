"""Outbound HTTP to hosts someone else named: the guarded client push and every integration's connector use."""
