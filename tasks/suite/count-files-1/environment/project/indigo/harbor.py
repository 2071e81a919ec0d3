harbor
