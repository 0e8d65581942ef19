"""Webhooks: events written with the changes they tell of (``events``), endpoints and their
rules (``endpoints``), the address check against server-side request forgery (``addresses``),
signed delivery through the durable queue (``delivery``) and Slack-compatible bodies (``slack``)."""
