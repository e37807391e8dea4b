"""Prompt traffic: counting tokens and measuring how much of each prompt repeats an earlier start."""
