//! Counterfactual replays of imported sessions.
