package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"labelprivacy/config"
)

// typedArgs is the root command's annotation holding the arguments it was
// given (setArgs), NUL-separated.
const typedArgs = "typed-args"

// setArgs gives root its arguments and records them, so that a result's
// provenance is the command line as it was typed (commandLine).
func setArgs(root *cobra.Command, args []string) {
	root.SetArgs(append([]string{}, args...)) // non-nil: cobra falls back to os.Args on nil
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[typedArgs] = strings.Join(args, "\x00")
}

// commandLine is the command line that ran cmd as it was typed (setArgs:
// the root's name, then every argument in its order, each word
// shell-quoted), else rebuilt from what cobra parsed: the command path,
// then every flag given, repeatable ones (--set) in their order.
func commandLine(cmd *cobra.Command) string {
	root := cmd.Root()
	if typed, ok := root.Annotations[typedArgs]; ok {
		words := []string{root.Name()}
		if typed != "" {
			words = append(words, strings.Split(typed, "\x00")...)
		}
		for i, w := range words {
			words[i] = shellQuote(w)
		}
		return strings.Join(words, " ")
	}
	words := strings.Fields(cmd.CommandPath())
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				words = append(words, "--"+f.Name, v)
			}
			return
		}
		if f.Value.Type() == "bool" {
			words = append(words, "--"+f.Name+"="+f.Value.String())
			return
		}
		words = append(words, "--"+f.Name, f.Value.String())
	})
	for i, w := range words {
		words[i] = shellQuote(w)
	}
	return strings.Join(words, " ")
}

// shellQuote quotes w for a POSIX shell when it holds anything but
// letters, digits and -_./:=,+@%.
func shellQuote(w string) string {
	if w != "" && strings.IndexFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
	}) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// optionInMessage is an option a library message names: `key`.
var optionInMessage = regexp.MustCompile("`([a-z_]+)`")

// flagError says a library error about one of a command's options (a
// *config.FieldError) in flags: its key, and the options its message
// names as `key`, become --key (_ as -), or the flag flags maps them to.
// The result is a *usageError wrapping err (exit status 2).
func flagError(err error, flags map[string]string) error {
	var fe *config.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	flag := func(key string) string {
		if f, ok := flags[key]; ok {
			return f
		}
		return "--" + strings.ReplaceAll(key, "_", "-")
	}
	msg := optionInMessage.ReplaceAllStringFunc(fe.Msg, func(m string) string { return flag(m[1 : len(m)-1]) })
	return &usageError{msg: flag(fe.Key) + ": " + msg, err: err}
}

// overrideKey is the key of a key=value argument: a dotted config key.
var overrideKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*=`)

// overrideArgs accepts the arguments of a command taking --set: each must be
// key=value, an override like --set's (config.Load checks the key). Any
// other is refused as an unknown subcommand (with cobra's suggestions) or
// argument, naming the override forms.
func overrideArgs(cmd *cobra.Command, args []string) error {
	for _, a := range args {
		if overrideKey.MatchString(a) {
			continue
		}
		what := "argument"
		if cmd.HasAvailableSubCommands() {
			what = "command"
		}
		msg := fmt.Sprintf("unknown %s %q for %q; config overrides are key=value or --set key=value (e.g. train.epochs=3)", what, a, cmd.CommandPath())
		if s := cmd.SuggestionsFor(a); len(s) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
		}
		return errors.New(msg)
	}
	return nil
}
