// Command hgpsim runs scenario simulations of decentralized bilevel
// optimization over unreliable networks.
//
//	hgpsim run FILE [--out DIR] [--set k=v]  run a scenario
//	hgpsim validate FILE [--set k=v]        check a scenario and exit
//	hgpsim sweep FILE... [--grid k=v1,v2] [--seeds 1-5]
//	                                        run a study and tabulate
//	hgpsim bench [flags]                    SGP, HGP and outer-step costs of both drivers
//	hgpsim worker --listen HOST:PORT        host clients of runs started elsewhere
//	hgpsim version                          module version and VCS revision
//
// Every command takes --help. Exit codes: 0 success, 1 a run that failed,
// 2 invalid input, 130 / 143 a run stopped by SIGINT / SIGTERM.
//
// The command sits on top: it may import every package of the module.
package main
