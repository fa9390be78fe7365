"""The Compare page's drawing parts: column settings, the live columns, blind votes, the leaderboard."""
