package memstate

// Bridges for words_test.go (package memstate_test), which checks the
// words report/mem writes for this package's real fixtures: an external
// test package may import report/mem, which imports memstate.
var (
	ReadV1            = readV1
	Judge             = judge
	Fixture           = fixture
	UML61Fixture      = uml61Fixture
	ParseKernelLog    = parseKernelLog
	ActivityOf        = activitySnapshot
	HostShmemGroup    = host618Shmem
	CgroupsWithHost   = cgroupsOf
	CgroupsV2Gopsutil = cgroupsV2Gopsutil
	CalmSnapshots     = calmSnapshots
	FormsLog          = formsLog
)
