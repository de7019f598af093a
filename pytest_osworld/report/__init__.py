"""Results on disk, the terminal summary and (later) the HTML report."""
