"""Results on disk, the terminal summary, the HTML report, merging and rescoring."""
