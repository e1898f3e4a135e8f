"""pytest plugin for provider-cassettes (marker, fixture, options, summary)."""
