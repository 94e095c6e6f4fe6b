"""``hanyi leaderboard``: submissions in, a ranked, validated leaderboard out (issue 38)."""
