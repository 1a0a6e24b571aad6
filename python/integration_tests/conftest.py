"""The framework adapters' tests: each runs against the installed wheel and the framework's own
packages (pinned by scripts/test-integrations.sh)."""
