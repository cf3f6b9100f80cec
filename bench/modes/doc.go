// Package main is the embedded-versus-server benchmark (main.go, built with the chdb
// tag: make bench-modes).
package main
