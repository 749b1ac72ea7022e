"""``backend: {type: http}``: a team's own search endpoint under the gate."""
