"""The user's own measurements: benchmark tools' result files and the replay client."""
