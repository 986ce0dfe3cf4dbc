"""`nnfuzz report`: a bug store as one static HTML page (store.py gathers, timeline.py and charts.py plot,
graph.py draws graphs, bugpage.py and page.py write the HTML)."""
