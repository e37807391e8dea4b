"""How answers are shown: money and number formats, charts, the one-page PDF."""
