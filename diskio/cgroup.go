package diskio

import "github.com/memdiag/memdiag/process"

// UnitFromCgroup and ParseCgroupFile are package process's, the one
// mapper from a cgroup to a unit.
//
// Deprecated: call process.UnitFromCgroup and process.ParseCgroupFile;
// these stay while other branches use them.
var (
	UnitFromCgroup  = process.UnitFromCgroup
	ParseCgroupFile = process.ParseCgroupFile
)
