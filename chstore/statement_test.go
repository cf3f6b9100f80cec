package chstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The conformance suite only sees registered statements: a service package that sends
// SQL through Tool would escape it.
func TestServicePackagesSendOnlyRegisteredStatements(t *testing.T) {
	root := ".."
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (strings.HasPrefix(name, ".") || name == "bench" || name == "testkit" || name == "conformance") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || filepath.Dir(path) == "." {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "chstore.Tool(") {
			t.Errorf("%s sends SQL through chstore.Tool; register it with chstore.Register", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRegisterRefusesDuplicateNames(t *testing.T) {
	Register("chstore.test_duplicate", "SELECT 1")
	defer func() {
		if recover() == nil {
			t.Error("second Register of the same name did not panic")
		}
	}()
	Register("chstore.test_duplicate", "SELECT 2")
}
