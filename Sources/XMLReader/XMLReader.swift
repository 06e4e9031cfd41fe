// XMLReader: a small, bounded XML 1.0 reader of our own (`XMLElementTree`), in pure Swift: what
// an MPD needs, every count and depth limited. It is its own module so that any format that is
// XML (DASH now; a podcast feed, a TTML caption later) reads it the same way.
