//! OS signals as futures: [`ctrl_c`]. (Being written.)
