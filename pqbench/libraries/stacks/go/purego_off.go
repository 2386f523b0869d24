//go:build !purego

package main

// purego reports a build with the purego tag, which compiles every assembly path out.
const purego = false
