package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kwhouse/kwhouse/accounts"
	"github.com/kwhouse/kwhouse/app"
)

func (c *cli) accountsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "accounts", Short: "Create and list accounts"}
	cmd.AddCommand(c.accountsCreateCmd(), c.accountsListCmd())
	return cmd
}

// openAccounts opens the store with the schema applied.
func (c *cli) openAccounts(cmd *cobra.Command) (*accounts.Store, func(), error) {
	cfg, log, err := c.load(false)
	if err != nil {
		return nil, nil, err
	}
	db, err := c.openDB(cmd.Context(), cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := app.Migrate(cmd.Context(), cfg, db, log); err != nil {
		db.Close()
		return nil, nil, err
	}
	return accounts.NewStore(db, time.Now), func() { db.Close() }, nil
}

func (c *cli) accountsCreateCmd() *cobra.Command {
	var name string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create an account and print its API keys (shown once, stored only as hashes)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, closeFn, err := c.openAccounts(cmd)
			if err != nil {
				return err
			}
			defer closeFn()
			created, err := store.Create(cmd.Context(), name)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(created)
			}
			fmt.Fprintf(out, "account_id: %s\ntest_key:   %s\nlive_key:   %s\n(keep the keys: they cannot be shown again)\n",
				created.AccountID, created.TestKey, created.LiveKey)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "account name (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"account_id","test_key","live_key"} as JSON`)
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func (c *cli) accountsListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List accounts",
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, closeFn, err := c.openAccounts(cmd)
			if err != nil {
				return err
			}
			defer closeFn()
			list, err := store.List(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(list)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ACCOUNT\tNAME\tCREATED")
			for _, a := range list {
				fmt.Fprintf(w, "%s\t%s\t%s\n", a.ID, a.Name, a.TimeCreated.Format(time.RFC3339))
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
