#pragma once
// Test support: reads an MPS file into a MilpModel with CoinUtils' CoinMpsIO (installed with CBC;
// only compiled when SIA_HAS_CBC). The library itself reads no MPS: models are built in code, and
// the MPS files the tests need (../shared/data/cbc-regressions) are read here.
#include <sia/error.hpp>
#include <sia/milp/model.hpp>

#include <CoinMessageHandler.hpp>
#include <CoinMpsIO.hpp>
#include <CoinPackedMatrix.hpp>

#include <cmath>
#include <string>

namespace sia::test {

/// The model of an MPS file (CoinMpsIO conventions: minimisation, |bounds| >= 1e30 infinite).
/// @throws InvalidArgument naming the file when CoinMpsIO reports errors.
inline MilpModel read_mps_with_coin(const std::string& file) {
  CoinMpsIO mps;
  CoinMessageHandler quiet;
  quiet.setLogLevel(-1);  // below every message's detail level: CoinMpsIO prints nothing
  mps.passInMessageHandler(&quiet);
  if (mps.readMps(file.c_str(), "") != 0) throw InvalidArgument(file + ": CoinMpsIO could not read it");
  const double inf = mps.getInfinity();
  auto value = [inf](double v) { return v >= inf ? MilpModel::inf : (v <= -inf ? -MilpModel::inf : v); };
  MilpModel m;
  m.sense = MilpSense::minimize;
  m.obj_offset = -mps.objectiveOffset();  // CoinMpsIO keeps the objective row's RHS, i.e. minus the offset
  for (int j = 0; j < mps.getNumCols(); ++j)
    (void)m.add_col(mps.getObjCoefficients()[j], value(mps.getColLower()[j]), value(mps.getColUpper()[j]),
                    mps.isInteger(j), mps.columnName(j));
  for (int i = 0; i < mps.getNumRows(); ++i)
    (void)m.add_row(value(mps.getRowLower()[i]), value(mps.getRowUpper()[i]), mps.rowName(i));
  const CoinPackedMatrix* a = mps.getMatrixByCol();
  for (int j = 0; j < a->getNumCols(); ++j)
    for (CoinBigIndex k = a->getVectorStarts()[j]; k < a->getVectorStarts()[j] + a->getVectorLengths()[j]; ++k)
      m.add_entry(a->getIndices()[k], j, a->getElements()[k]);
  return m;
}

}  // namespace sia::test
