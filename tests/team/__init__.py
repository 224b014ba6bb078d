"""recall/team/: team memory on PostgreSQL, and the throwaway server the tests start."""
