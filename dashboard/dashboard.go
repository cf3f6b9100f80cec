// Package dashboard is the cost dashboard's page: HTML, CSS and plain JavaScript modules
// embedded in the binary, served at GET /dashboard. The page holds no data: it asks the
// public API for everything with the key its user enters (docs/dashboard.md).
package dashboard

import (
	"embed"
	"io/fs"
)

//go:embed assets
var assets embed.FS

// Assets are the page's files: index.html and the modules and styles it loads, all at
// the top level.
func Assets() fs.FS {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // "assets" is embedded above: fs.Sub fails only for an invalid name
	}
	return sub
}
